#!/usr/bin/env bash
# Fetches S3Proxy (Maven Central org.gaul:s3proxy:4.1.0, classifier jar-with-dependencies: one jar,
# runs on Java 17) into .cache/s3proxy/, checked against Maven Central's SHA-1. The object storage
# tests' S3-compatible server: test/support/s3.ts starts it once per run (a shared fixture, through
# run.sh) on 127.0.0.1 with its filesystem backend in a temporary directory. Idempotent.
# Environment: S3PROXY_VERSION (default 4.1.0).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
. "$root/scripts/maven-central.sh"
version="${S3PROXY_VERSION:-4.1.0}"
name="s3proxy-$version-jar-with-dependencies.jar"
LABEL=s3proxy central_fetch "org/gaul/s3proxy/$version/$name" "$root/.cache/s3proxy/$name"
echo "s3proxy: $name ready in .cache/s3proxy" >&2
