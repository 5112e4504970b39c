#!/bin/sh
# Build the Java example bot with plain javac against Debian's jars
# (apt: libjeromq-java libmsgpack-java). Output: build/okgin-bot.jar and the launcher
# build/okgin-bot, which puts those jars on the class path.
# Skips the compile when no source is newer than the jar (set FORCE=1 to rebuild).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
jars=${OKGIN_JAVA_JARS:-/usr/share/java}
cp="$jars/jeromq.jar:$jars/msgpack-core.jar"
for jar in "$jars/jeromq.jar" "$jars/msgpack-core.jar"; do
  [ -f "$jar" ] || { echo "build.sh: $jar missing: apt-get install --no-install-recommends libjeromq-java libmsgpack-java" >&2; exit 1; }
done
out="$here/build"
jar_file="$out/okgin-bot.jar"
if [ "${FORCE:-0}" != 1 ] && [ -f "$jar_file" ] && [ -z "$(find "$here/src" -name '*.java' -newer "$jar_file")" ]; then
  exit 0
fi
rm -rf "$out/classes"
mkdir -p "$out/classes"
javac --release 17 -Xlint:all -Werror -encoding UTF-8 -cp "$cp" -d "$out/classes" $(find "$here/src" -name '*.java')
printf 'Main-Class: okgin.bot.Main\nClass-Path: %s %s\n' "$jars/jeromq.jar" "$jars/msgpack-core.jar" >"$out/manifest.txt"
jar --create --file "$jar_file" --manifest "$out/manifest.txt" -C "$out/classes" .
cat >"$out/okgin-bot" <<LAUNCH
#!/bin/sh
exec java -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xshare:auto -jar "$jar_file" "\$@"
LAUNCH
chmod +x "$out/okgin-bot"
echo "built $jar_file"
