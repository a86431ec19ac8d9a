import { isId, signJwt } from "@flashgate/auth";
import { type Command, InvalidArgumentError } from "commander";
import { localStack } from "../local-stack.ts";

/** Only ids the API accepts: a token it would refuse is no use to anyone. */
const userId = (value: string) => {
  if (!isId(value)) throw new InvalidArgumentError("a positive integer user id (at most 2^53 − 1)");
  return value;
};

export function registerTokenCommand(program: Command) {
  program
    .command("token")
    .description("mint a JWT from the local stack's secrets (for demos and tests)")
    .option("--user <id>", "storefront token for this user id", userId)
    .option("--admin <operator>", "back-office token with role admin")
    .option("--ttl <seconds>", "lifetime", "3600")
    .action(async (options: { user?: string; admin?: string; ttl: string }) => {
      if (!options.user === !options.admin)
        throw new InvalidArgumentError("give exactly one of --user or --admin");
      const { secrets } = (await localStack()).stackContext();
      const exp = Math.floor(Date.now() / 1000) + Number(options.ttl);
      const token = options.user
        ? signJwt(secrets.authJwtSecret, { sub: options.user, exp })
        : signJwt(secrets.adminJwtSecret, { sub: options.admin as string, role: "admin", exp });
      process.stdout.write(`${token}\n`);
    });
}
