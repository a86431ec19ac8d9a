// npm run client:types — writes packages/client/src/api.gen.ts from the API's OpenAPI document.
import { writeFileSync } from "node:fs";
import { clientTypes, clientTypesFile } from "../packages/client/src/generate.ts";

writeFileSync(clientTypesFile, await clientTypes());
console.log(`wrote ${clientTypesFile.pathname}`);
