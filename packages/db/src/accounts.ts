/** The database flashgate's schema lives in, and the accounts migrate creates on it. */
export const databaseName = "flashgate";
/** The purchase API's account: the sale tables' rows it decides, pays and administers, nothing else. */
export const appDbUser = "flashgate";
/** The cache-maintainer's: what it reads to rebuild and check the cache, expires, and records; binlog coordinates. */
export const maintainerDbUser = "flashgate_maintainer";
/** Debezium's account: replication and the signal table. */
export const debeziumDbUser = "debezium";
/** A DBA's account: the sale tables' rows (no DDL, no grants, no signal table). */
export const dbaDbUser = "flashgate_dba";
