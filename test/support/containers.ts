/**
 * testcontainers helpers shared by the Kafka and Redis containers of the tests: a container whose
 * ports are published on 127.0.0.1 only, at a fixed host port (so a stopped and started container
 * comes back at the same address), and stop/start/remove by id.
 */
import { randomBytes } from 'node:crypto';
import { GenericContainer, getContainerRuntimeClient, type ContainerRuntimeClient } from 'testcontainers';
import { configureTestcontainersEnv, OWNER_LABEL } from './test-engine.js';

/** A GenericContainer that publishes ports on the loopback only (testcontainers binds all interfaces). */
export class LoopbackContainer extends GenericContainer {
  /** Publishes `containerPort` on 127.0.0.1:`hostPort`. */
  withLoopbackPort(containerPort: number, hostPort: number): this {
    const key = `${containerPort}/tcp`;
    this.exposedPorts = [...this.exposedPorts, { container: containerPort, host: hostPort }];
    this.createOpts.ExposedPorts = { ...this.createOpts.ExposedPorts, [key]: {} };
    this.hostConfig.PortBindings = {
      ...this.hostConfig.PortBindings,
      [key]: [{ HostIp: '127.0.0.1', HostPort: String(hostPort) }],
    };
    return this;
  }
}

/** A container name that shows what it is in `podman ps -a`: `quoteflow-test-<what>-<random>`. */
export function containerName(what: string): string {
  return `quoteflow-test-${what}-${randomBytes(3).toString('hex')}`;
}

/** A LoopbackContainer of `image`, named, labelled with its owner, never pulled (images are local). */
export function testContainer(image: string, name: string, ownerPid = process.pid): LoopbackContainer {
  configureTestcontainersEnv();
  return new LoopbackContainer(image)
    .withName(name)
    .withLabels({ [OWNER_LABEL]: String(ownerPid) })
    .withAutoRemove(false);
}

export async function runtimeClient(): Promise<ContainerRuntimeClient> {
  configureTestcontainersEnv();
  return getContainerRuntimeClient();
}

/** Stops a container by id (SIGTERM, then SIGKILL after `timeoutMs`), keeping it for a start. */
export async function stopContainer(id: string, timeoutMs = 60_000): Promise<void> {
  const client = await runtimeClient();
  await client.container.stop(client.container.getById(id), { timeout: timeoutMs });
}

/** Starts a stopped container by id (same ports, same file system). */
export async function startContainer(id: string): Promise<void> {
  const client = await runtimeClient();
  await client.container.start(client.container.getById(id));
}

/** Removes a container by id, running or not (killed: its data goes too); a missing one is fine. */
export async function removeContainer(id: string): Promise<void> {
  const client = await runtimeClient();
  try {
    await client.container.getById(id).remove({ force: true, v: true });
  } catch (err) {
    if ((err as { statusCode?: number }).statusCode !== 404) throw err;
  }
}

/**
 * Removes test containers whose owner process is gone (Ryuk is off): a run killed hard leaves its
 * Kafka and Redis containers behind, and the next run clears them.
 */
export async function reapOrphans(): Promise<void> {
  const client = await runtimeClient();
  // testcontainers' list() shows running containers only; a stopped orphan holds its port too.
  const { dockerode } = client.container as unknown as { dockerode: DockerodeList };
  for (const info of await dockerode.listContainers({ all: true, filters: { label: [OWNER_LABEL] } })) {
    const pid = Number(info.Labels?.[OWNER_LABEL]);
    if (!Number.isInteger(pid) || pid <= 0 || isAlive(pid)) continue;
    await removeContainer(info.Id);
  }
}

interface DockerodeList {
  listContainers(opts: {
    all: boolean;
    filters: { label: string[] };
  }): Promise<{ Id: string; Labels?: Record<string, string> }[]>;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
