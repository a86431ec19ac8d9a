export { idPattern, isId, isRequestId, parseId, requestIdPattern } from "./ids.ts";
export { createJwksVerifier, JwksUnavailableError } from "./jwks.ts";
export {
  createJwtVerifier,
  type JwtClaims,
  JwtError,
  type JwtVerifier,
  signJwt,
  type TokenVerifier,
} from "./jwt.ts";
export {
  readSignatureHeader,
  type SignatureFailure,
  signPayload,
  verifyPayloadSignature,
} from "./signature.ts";
