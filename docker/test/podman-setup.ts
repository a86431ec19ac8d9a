import { servePodman } from "@flashgate/testkit/podman";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    /** The Docker API that podman serves for this run: docker-compose talks to it. */
    dockerHost: string;
  }
}

/** The local images, built; podman's Docker API, served: the compose file runs as a Docker user runs it. */
export default async function setup(project: TestProject) {
  const podman = await servePodman();
  project.provide("dockerHost", podman.dockerHost);
  return podman.stop;
}
