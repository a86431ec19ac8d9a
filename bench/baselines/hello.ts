// The ceiling: a bare node:http hello world on the same machine.
import { createServer } from "node:http";

createServer((_, response) => {
  response.writeHead(200, { "content-type": "text/plain" });
  response.end("hello");
}).listen(Number(process.env.PORT), "127.0.0.1");
