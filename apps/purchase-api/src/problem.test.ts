import { describe, expect, it } from "vitest";
import { type ErrorCode, problemReply, problems } from "./problem.ts";

describe("problem replies", () => {
  it("every code serialises to RFC 9457 JSON with its type, title, status, detail, code and trace id", () => {
    for (const code of Object.keys(problems) as ErrorCode[]) {
      const reply = problemReply(code, 'a "quoted" détail\n', "trace-1234");
      const problem = JSON.parse(reply.body);
      expect(Object.keys(problem)).toEqual(["type", "title", "status", "detail", "code", "traceId"]);
      expect(problem.type).toBe(`https://flashgate.dev/problems/${code.toLowerCase().replaceAll("_", "-")}`);
      expect(problem.title.length).toBeGreaterThan(0);
      expect(problem.status).toBe(problems[code].status);
      expect(reply.status).toBe(problems[code].status);
      expect(problem.detail).toBe('a "quoted" détail\n');
      expect(problem.code).toBe(code === "PAYLOAD_TOO_LARGE" ? "INVALID_REQUEST" : code);
      expect(problem.traceId).toBe("trace-1234");
      expect(reply.headers["content-type"]).toBe("application/problem+json");
    }
  });

  it("says when to retry a 429 or 503", () => {
    expect(problemReply("RATE_LIMITED", "slow down", "t", 3).headers["retry-after"]).toBe("3");
    expect(problemReply("UNAVAILABLE", "down", "t").headers["retry-after"]).toBe("1");
    expect(problemReply("SOLD_OUT", "gone", "t").headers["retry-after"]).toBeUndefined();
  });
});
