#!/usr/bin/env bash
# Fetches what Spark needs to read s3a:// paths (the object storage tests' Delta tables on S3Proxy)
# from Maven Central into .cache/s3a-jars/, each checked against Maven Central's SHA-1:
# org.apache.hadoop:hadoop-aws at the version of pyspark's bundled Hadoop client (3.4.2), and what
# its POM names at compile scope: software.amazon.awssdk:bundle 2.29.52 (hadoop-project 3.4.2's
# aws-java-sdk-v2.version; ~640 MB, shaded, nothing else needed) and
# software.amazon.s3.analyticsaccelerator:analyticsaccelerator-s3 1.2.1.
# test/python/read_dataset.py puts every jar there on its Spark session's classpath. Idempotent.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
. "$root/scripts/maven-central.sh"
jars=(
  "org/apache/hadoop/hadoop-aws/3.4.2/hadoop-aws-3.4.2.jar"
  "software/amazon/awssdk/bundle/2.29.52/bundle-2.29.52.jar"
  "software/amazon/s3/analyticsaccelerator/analyticsaccelerator-s3/1.2.1/analyticsaccelerator-s3-1.2.1.jar"
)
for jar in "${jars[@]}"; do
  LABEL=s3a central_fetch "$jar" "$root/.cache/s3a-jars/$(basename "$jar")"
done
