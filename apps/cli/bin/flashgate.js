#!/usr/bin/env node
// npm puts the project's Node 24 (the `node` devDependency) first on PATH, which runs the TypeScript sources directly.
import "../src/main.ts";
