import { signJwt } from "@flashgate/auth";
import { stackContext } from "@flashgate/stack";
import { type Command, InvalidArgumentError } from "commander";

const userId = (value: string) => {
  if (!/^[1-9]\d{0,17}$/.test(value)) throw new InvalidArgumentError("a positive integer user id");
  return value;
};

export function registerTokenCommand(program: Command) {
  program
    .command("token")
    .description("mint a JWT from the local stack's secrets (for demos and tests)")
    .option("--user <id>", "storefront token for this user id", userId)
    .option("--admin <operator>", "back-office token with role admin")
    .option("--ttl <seconds>", "lifetime", "3600")
    .action((options: { user?: string; admin?: string; ttl: string }) => {
      if (!options.user === !options.admin)
        throw new InvalidArgumentError("give exactly one of --user or --admin");
      const { secrets } = stackContext();
      const exp = Math.floor(Date.now() / 1000) + Number(options.ttl);
      const token = options.user
        ? signJwt(secrets.authJwtSecret, { sub: options.user, exp })
        : signJwt(secrets.adminJwtSecret, { sub: options.admin as string, role: "admin", exp });
      process.stdout.write(`${token}\n`);
    });
}
