import { idPattern, requestIdPattern } from "@flashgate/auth";
import type { Handler, Hono, MiddlewareHandler } from "hono";
import type { z } from "zod";
import type { AppEnv } from "./env.ts";
import type { ErrorCode } from "./problem.ts";

type Security = "user" | "admin" | "signature" | "none";

/**
 * One route, whole: what it serves and to whom, as the app mounts it and the OpenAPI document
 * describes it, from the schemas the route itself validates and answers with.
 */
export interface Operation {
  method: "get" | "post" | "put";
  /** As OpenAPI writes it: `{name}` for a path parameter. */
  path: string;
  summary: string;
  security: Security;
  parameters?: { name: string; in: "path" | "header" | "query"; pattern: string; description: string }[];
  body?: z.ZodType;
  responses: Record<
    number,
    /** `bodyless`: the answer carries no content (304). */
    { description: string; schema?: z.ZodType; contentType?: string; headers?: string[]; bodyless?: boolean }
  >;
  problems: ErrorCode[];
}

/** Path parameters that are ids: positive safe integers. */
export const pathIds = (...names: string[]) =>
  names.map((name) => ({
    name,
    in: "path" as const,
    pattern: idPattern.source,
    description: "a positive integer (≤ 2^53 − 1)",
  }));

export const keyPattern = requestIdPattern.source;

/** The middleware that authenticates a route's callers, by the security it declares. */
export type Guards = Record<"user" | "admin", MiddlewareHandler<AppEnv>>;

/** An operation's path as Hono routes it (and labels its metrics): `:name` for `{name}`. */
export const routePath = (operation: Operation) => operation.path.replaceAll(/\{(\w+)\}/g, ":$1");

/** Serves an operation on its method and path, behind the guard its security names (a public one behind none). */
export function serve(router: Hono<AppEnv>, operation: Operation, handler: Handler<AppEnv>, guards?: Guards) {
  const path = routePath(operation);
  const method = operation.method.toUpperCase();
  if (operation.security !== "user" && operation.security !== "admin")
    return void router.on(method, path, handler);
  const guard = guards?.[operation.security];
  if (!guard) throw new Error(`${operation.path} is served only behind its ${operation.security} guard`);
  router.on(method, path, guard, handler);
}
