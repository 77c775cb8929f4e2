declare module "swagger-ui-dist" {
  /** The folder holding Swagger UI's built assets. */
  export function getAbsoluteFSPath(): string;
  const swaggerUi: { getAbsoluteFSPath(): string };
  export default swaggerUi;
}
