export { createJwtVerifier, type JwtClaims, JwtError, type JwtVerifier, signJwt } from "./jwt.ts";
export { signPayload, type SignatureFailure, verifyPayloadSignature } from "./signature.ts";
