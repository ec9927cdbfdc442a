import { describe, expect, it } from "vitest";
import {
  type Container,
  imageParts,
  type K8sObject,
  migrationJob,
  overlays,
  podTemplates,
  render,
  renderEdited,
  serviceContainer,
  services,
  targets,
} from "../support/k8s.ts";

/**
 * Images and releases: every image names its registry (none can resolve to somebody else's
 * on Docker Hub), one pinned version per rendering, and the migration Job named for that
 * version, so that applying the next one creates a new Job instead of failing on the old
 * one's pod template, which cannot change.
 */
function containers(objects: K8sObject[]): { where: string; container: Container }[] {
  return podTemplates(objects).flatMap(({ owner, spec }) =>
    [...(spec.initContainers ?? []), ...spec.containers].map((container: Container) => ({
      where: `${owner.metadata.name}/${container.name}`,
      container,
    })),
  );
}

/** A Job's name: a DNS subdomain, and at most 63 characters (its pods' `job-name` label). */
const validJobName = /^(?=.{1,63}$)[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

const dockerHub = new Set(["docker.io", "index.docker.io", "registry-1.docker.io"]);

describe.each(Object.keys(targets) as (keyof typeof targets)[])("the images of %s", (target) => {
  const objects = render(target);

  it("name their registry, never Docker Hub, and are pulled only when missing", () => {
    for (const { where, container } of containers(objects)) {
      const { registry } = imageParts(container.image);
      expect(registry, `${where}: ${container.image}`).not.toBeNull();
      expect(dockerHub.has(registry!), where).toBe(false);
      expect(container.imagePullPolicy, where).toBe("IfNotPresent");
    }
    const registries = new Set(
      containers(objects).map(({ container }) => imageParts(container.image).registry),
    );
    // The base names a registry that cannot exist; dev runs images loaded into the cluster.
    if (target === "base") expect([...registries]).toEqual(["registry.example.invalid"]);
    if (target === "dev") expect([...registries]).toEqual(["localhost"]);
  });

  it("are pinned, one version for every image, each service from its own image", () => {
    const tags = new Set(containers(objects).map(({ container }) => imageParts(container.image).tag));
    expect(tags.size).toBe(1);
    const [tag] = tags;
    expect(tag).toBeTruthy();
    expect(tag).not.toBe("latest");
    if (target === "dev") expect(tag).toBe("dev");
    for (const service of Object.keys(services) as (keyof typeof services)[]) {
      expect(imageParts(serviceContainer(objects, service).image).name).toBe(service);
    }
  });
});

describe.each(Object.keys(targets) as (keyof typeof targets)[])("the migration Job of %s", (target) => {
  const job = migrationJob(render(target));
  const [migrate] = job.spec.template.spec.containers as Container[];

  it("is named for the release where the images are set, as a Job may be named", () => {
    const { tag } = imageParts(migrate!.image);
    expect(job.metadata.name).toBe(target === "base" ? "herald-migrate" : `herald-migrate-${tag}`);
    expect(job.metadata.name).toMatch(validJobName);
  });

  it("has no deadline, which would count the time its pod waits for a Secret", () => {
    expect(job.spec.activeDeadlineSeconds).toBeUndefined();
    expect(job.spec.backoffLimit).toBeGreaterThan(0);
    expect(job.spec.ttlSecondsAfterFinished).toBeGreaterThan(0);
  });
});

describe.each(overlays)("upgrading the %s overlay", (overlay) => {
  it("applies a new migration Job, of the new version, and the same everywhere else", () => {
    const upgraded = renderEdited(overlay, (text) => text.replace(/newTag: \S+/g, "newTag: 0.2.0-rc.1"));
    const job = migrationJob(upgraded);
    expect(job.metadata.name).toBe("herald-migrate-0.2.0-rc.1");
    expect(job.metadata.name).not.toBe(migrationJob(render(overlay)).metadata.name);
    for (const { where, container } of containers(upgraded)) {
      expect(imageParts(container.image).tag, where).toBe("0.2.0-rc.1");
    }
  });
});
