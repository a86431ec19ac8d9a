import { defineConfig } from "vitest/config";
import { fastTiers } from "./vitest.config.ts";

/** Mutation testing runs the fast tiers only: every mutant is judged in seconds, without Kafka. */
export default defineConfig({ test: { projects: fastTiers } });
