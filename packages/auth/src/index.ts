export { idPattern, isId, isRequestId, parseId, requestIdPattern } from "./ids.ts";
export { createJwtVerifier, type JwtClaims, JwtError, type JwtVerifier, signJwt } from "./jwt.ts";
export {
  readSignatureHeader,
  type SignatureFailure,
  signPayload,
  verifyPayloadSignature,
} from "./signature.ts";
