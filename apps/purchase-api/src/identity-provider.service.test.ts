import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createSale, freshIds, idempotencyKey, userToken } from "@flashgate/testkit";
import { type ApiHarness, startApi } from "@flashgate/testkit/purchase-api";
import { exportJWK, generateKeyPair, type JWK, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const issuer = "https://id.storefront.example";
const audience = "flashgate-purchases";

/** The storefront's identity provider: keys it signs with, the set it publishes, and every fetch of it. */
async function identityProvider() {
  type PrivateKey = Awaited<ReturnType<typeof generateKeyPair>>["privateKey"];
  const signers = new Map<string, PrivateKey>();
  const published: JWK[] = [];
  let fetches = 0;
  let down = false;
  const server: Server = createServer((_, response) => {
    fetches++;
    if (down) return response.writeHead(503).end();
    response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ keys: published }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const addKey = async (alg: "RS256" | "ES256" | "EdDSA") => {
    const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
    const kid = randomUUID();
    signers.set(kid, privateKey);
    published.push({ ...(await exportJWK(publicKey)), kid, alg, use: "sig" });
    return { kid, alg };
  };
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`,
    addKey,
    /** Retires every key but the newest (a rotation completed). */
    retireOld: () => published.splice(0, published.length - 1),
    token: (key: { kid: string; alg: string }, userId: number, kid = key.kid) =>
      new SignJWT({ sub: String(userId) })
        .setProtectedHeader({ alg: key.alg, kid })
        .setIssuer(issuer)
        .setAudience(audience)
        .setExpirationTime("10m")
        .sign(signers.get(key.kid) as PrivateKey),
    fetches: () => fetches,
    setDown: (value: boolean) => {
      down = value;
    },
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

describe("storefront tokens from the storefront's identity provider (a JWKS URL)", () => {
  let provider: Awaited<ReturnType<typeof identityProvider>>;
  let api: ApiHarness;
  beforeAll(async () => {
    provider = await identityProvider();
    api = await startApi({
      env: { AUTH_JWKS_URL: provider.url, JWT_ISSUER: issuer, JWT_AUDIENCE: audience },
    });
  });
  afterAll(async () => {
    await api?.close();
    await provider?.close();
  });

  const buy = async (token: string, sale: { activityId: number; skuId: number }) => {
    const response = await fetch(`${api.url}/v1/purchases`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${token}`,
        "idempotency-key": idempotencyKey(),
        "content-type": "application/json",
      },
      body: JSON.stringify(sale),
    });
    return { status: response.status, body: (await response.json()) as { code?: string; userId?: string } };
  };

  it("sells to buyers signed in by the provider (RS256, ES256, EdDSA) through a key rotation mid-sale; a forged key id is refused and cannot make every request fetch", async () => {
    const sale = freshIds();
    await createSale(api.pool, { ...sale, units: 100 });
    await api.load(sale.activityId, sale.skuId);
    const keys = [
      await provider.addKey("RS256"),
      await provider.addKey("ES256"),
      await provider.addKey("EdDSA"),
    ];
    for (const [i, key] of keys.entries()) {
      const bought = await buy(await provider.token(key, 500 + i), sale);
      expect(bought.status, JSON.stringify(bought.body)).toBe(201);
      expect(String(bought.body.userId)).toBe(String(500 + i));
    }

    // Mid-sale the provider rotates (a moment after the key set was fetched): a new key signs, the old
    // ones are retired.
    const rotated = await provider.addKey("ES256");
    provider.retireOld();
    const fetchesAtRotation = provider.fetches();
    const buyers = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => buy(await provider.token(rotated, 600 + i), sale)),
    );
    expect(buyers.map((b) => b.status)).toEqual(buyers.map(() => 201));
    expect(provider.fetches() - fetchesAtRotation).toBe(1);

    // Forged key ids, a hundred of them: refused, and the key set is not fetched for each.
    const fetchesBeforeForgery = provider.fetches();
    const forged = await Promise.all(
      Array.from({ length: 100 }, async (_, i) =>
        buy(await provider.token(rotated, 700 + i, randomUUID()), sale),
      ),
    );
    expect(new Set(forged.map((f) => f.status))).toEqual(new Set([401]));
    expect(provider.fetches() - fetchesBeforeForgery).toBe(1);
  });

  it("a token of the shared secret is refused when the provider's keys are the storefront's; the provider out of reach is a 503", async () => {
    const sale = freshIds();
    await createSale(api.pool, { ...sale, units: 10 });
    await api.load(sale.activityId, sale.skuId);
    const hs256 = await buy(userToken(api.config.AUTH_JWT_SECRET, 900), sale);
    expect([hs256.status, hs256.body.code]).toEqual([401, "UNAUTHORIZED"]);

    const key = await provider.addKey("RS256");
    provider.setDown(true);
    try {
      // A new key's token makes the API fetch the set, which answers 503.
      const unreachable = await buy(await provider.token(key, 800), sale);
      expect([unreachable.status, unreachable.body.code]).toEqual([503, "UNAVAILABLE"]);
    } finally {
      provider.setDown(false);
    }
    expect((await buy(await provider.token(key, 800), sale)).status).toBe(201);
  });
});
