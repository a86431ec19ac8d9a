export { type MigrateOptions, migrate } from "./migrate.ts";
export { type Migration, migrations } from "./migrations.ts";
export { createPool } from "./pool.ts";
