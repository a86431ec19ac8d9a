import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, type JWK, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createJwksVerifier, JwksUnavailableError } from "./jwks.ts";
import { JwtError, signJwt } from "./jwt.ts";

type Alg = "RS256" | "ES256" | "EdDSA";

/** An identity provider's key: its private half signs, its public half is published with its kid. */
async function providerKey(alg: Alg) {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const kid = randomUUID();
  const jwk: JWK = { ...(await exportJWK(publicKey)), kid, alg, use: "sig" };
  const sign = (claims: Record<string, unknown>, header: { kid?: string } = {}) =>
    new SignJWT(claims).setProtectedHeader({ alg, kid: header.kid ?? kid }).sign(privateKey);
  return { jwk, sign };
}

describe("storefront tokens verified against the identity provider's published keys", () => {
  const published: { keys: JWK[] } = { keys: [] };
  let fetches = 0;
  let down = false;
  let server: Server;
  let url: string;
  const issuer = "https://id.storefront.example";
  const audience = "flashgate";
  const exp = () => Math.floor(Date.now() / 1000) + 600;

  beforeAll(async () => {
    server = createServer((request, response) => {
      fetches++;
      if (down) return response.writeHead(503).end();
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(published));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/.well-known/jwks.json`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  const verifier = (refetchCooldownMs = 60_000) =>
    createJwksVerifier({ url, issuer, audience, refetchCooldownMs });

  it("accepts RS256, ES256 and EdDSA tokens of the provider, with the issuer and audience required", async () => {
    const keys = await Promise.all((["RS256", "ES256", "EdDSA"] as const).map(providerKey));
    published.keys = keys.map((key) => key.jwk);
    const verify = verifier();
    for (const [i, key] of keys.entries()) {
      const claims = await verify(
        await key.sign({ sub: String(100 + i), iss: issuer, aud: audience, exp: exp() }),
      );
      expect(claims.sub).toBe(String(100 + i));
    }
    const [rsa] = keys;
    const refused = async (token: Promise<string> | string) =>
      Promise.resolve()
        .then(async () => verify(await token))
        .then(
          () => "accepted",
          (error: unknown) => (error instanceof JwtError ? error.reason : String(error)),
        );
    expect(
      await refused(rsa.sign({ sub: "1", iss: "https://other.example", aud: audience, exp: exp() })),
    ).toBe("claims");
    expect(await refused(rsa.sign({ sub: "1", iss: issuer, aud: "another-service", exp: exp() }))).toBe(
      "claims",
    );
    expect(await refused(rsa.sign({ sub: "1", aud: audience, exp: exp() }))).toBe("claims");
    expect(await refused(rsa.sign({ sub: "1", iss: issuer, aud: audience, exp: exp() - 3600 }))).toBe(
      "expired",
    );
    expect(await refused(rsa.sign({ iss: issuer, aud: audience, exp: exp() }))).toBe("claims");
    // A shared-secret token, even one whose header names the provider's key: never asymmetric, refused.
    expect(await refused(signJwt("x".repeat(32), { sub: "1", iss: issuer, aud: audience, exp: exp() }))).toBe(
      "algorithm",
    );
    // Another key's signature under the provider's kid.
    const forger = await providerKey("RS256");
    expect(
      await refused(forger.sign({ sub: "1", iss: issuer, aud: audience, exp: exp() }, { kid: rsa.jwk.kid })),
    ).toBe("signature");
  });

  it("fetches a rotated key once, on its first tokens, even right after a fetch; a flood of forged key ids costs one fetch per cooldown", async () => {
    const before = await providerKey("ES256");
    published.keys = [before.jwk];
    const verify = verifier(300);
    await verify(await before.sign({ sub: "7", iss: issuer, aud: audience, exp: exp() }));

    // Rotated at once (within the cooldown): the new key's tokens wait for one shared fetch, and are accepted.
    const rotated = await providerKey("ES256");
    published.keys = [rotated.jwk];
    const atRotation = fetches;
    const tokens = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        rotated.sign({ sub: String(i + 1), iss: issuer, aud: audience, exp: exp() }),
      ),
    );
    const claims = await Promise.all(tokens.map((token) => verify(token)));
    expect(claims.map((c) => c.sub)).toEqual(tokens.map((_, i) => String(i + 1)));
    expect(fetches - atRotation).toBe(1);

    // Forged key ids, all at once: refused after one fetch, not one each.
    const fetchesBefore = fetches;
    const forged = await Promise.all(
      Array.from({ length: 50 }, () =>
        rotated.sign({ sub: "7", iss: issuer, aud: audience, exp: exp() }, { kid: randomUUID() }),
      ),
    );
    const verdicts = await Promise.all(
      forged.map((token) =>
        Promise.resolve()
          .then(() => verify(token))
          .then(
            () => "accepted",
            (error: unknown) => (error as JwtError).reason,
          ),
      ),
    );
    expect(new Set(verdicts)).toEqual(new Set(["signature"]));
    expect(fetches - fetchesBefore).toBe(1);
  });

  it("answers a token verified before from memory, at once, and still checks its expiry", async () => {
    const key = await providerKey("EdDSA");
    published.keys = [key.jwk];
    const verify = verifier();
    const token = await key.sign({ sub: "9", iss: issuer, aud: audience, exp: exp() });
    await verify(token);
    const again = verify(token);
    expect(again).not.toBeInstanceOf(Promise);
    expect(verify.cachedBytes()).toBe(token.length);
    expect(() => verify(token, exp() + 3600)).toThrow(/expired/);
  });

  it("a key set that cannot be fetched is a dependency down, not a bad token", async () => {
    const key = await providerKey("RS256");
    published.keys = [key.jwk];
    down = true;
    try {
      const verify = verifier();
      await expect(
        Promise.resolve().then(async () =>
          verify(await key.sign({ sub: "1", iss: issuer, aud: audience, exp: exp() })),
        ),
      ).rejects.toBeInstanceOf(JwksUnavailableError);
    } finally {
      down = false;
    }
  });
});
