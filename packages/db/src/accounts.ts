/** The database flashgate's schema lives in, and the accounts migrate creates on it. */
export const databaseName = "flashgate";
/** The apps' account: the sale tables' rows, nothing else. */
export const appDbUser = "flashgate";
/** Debezium's account: replication and the signal table. */
export const debeziumDbUser = "debezium";
/** A DBA's account: the sale tables' rows (no DDL, no grants, no signal table). */
export const dbaDbUser = "flashgate_dba";
