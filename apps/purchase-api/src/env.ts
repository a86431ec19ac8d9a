export interface AppEnv {
  Variables: {
    traceId: string;
    /** The authenticated storefront user (JWT sub). */
    userId: string;
    /** The authenticated back-office operator (admin JWT sub). */
    operator: string;
  };
}
