# Sourced by the scripts that fetch jars from Maven Central (python/delta-jars.sh, s3proxy/setup.sh).
# central_fetch PATH DEST: downloads https://repo1.maven.org/maven2/PATH to the file DEST, checked
# against Maven Central's SHA-1 of it (through DEST.part: DEST appears only whole and checked).
# Does nothing when DEST exists. LABEL (default "maven") prefixes its messages.
central_fetch() {
  local path="$1" dest="$2" url="https://repo1.maven.org/maven2/$1" label="${LABEL:-maven}"
  [[ -f "$dest" ]] && return 0
  mkdir -p "$(dirname "$dest")"
  echo "$label: fetching $(basename "$path") from Maven Central" >&2
  curl -fsSL --retry 3 -o "$dest.part" "$url"
  local want got
  want="$(curl -fsSL --retry 3 "$url.sha1" | cut -c1-40)"
  got="$(sha1sum "$dest.part" | cut -c1-40)"
  if [[ "$want" != "$got" ]]; then
    rm -f "$dest.part"
    echo "$label: $(basename "$path"): SHA-1 $got, Maven Central says $want" >&2
    return 1
  fi
  mv "$dest.part" "$dest"
}
