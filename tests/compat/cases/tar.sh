#!/usr/bin/env bash
# A tar round trip with other owners' files: others.tar (made by the suite: files of root, of
# uid 1234 and of nobody, a setgid directory, a private file, symlinks, a hard link, a sparse
# file) is listed, extracted as tar does for a user (plain, -p, --same-owner), packed again and
# compared. Prints what each step did, not who ran it.
set -u
export LC_ALL=C
me=$(id -u)
list() { tar -tvf "$1" --numeric-owner | awk '{ $4 = $5 = ""; print }'; }
tree() { (cd "$1" && find . -mindepth 1 -printf '%M %y %s %p -> %l\n' | sort); }
owners() { (cd "$1" && find . -mindepth 1 ! -uid "$me" -printf '%p not mine\n' | sort); }

echo "-- the archive"
list others.tar
for how in plain -p --same-owner; do
	mkdir "x$how"
	case $how in
	plain) tar -xf others.tar -C "x$how" 2>err ;;
	*) tar "$how" -xf others.tar -C "x$how" 2>err ;;
	esac
	echo "-- extract $how: exit $? ($(grep -c 'Cannot' err) errors)"
	tree "x$how"
	owners "x$how"
done
echo "-- packed again"
tar -cf back.tar -C xplain --sort=name .
list back.tar | awk '{ $2 = ""; print }'
echo "-- contents"
(cd xplain && find . -type f -print0 | sort -z | xargs -0 sha256sum)
mkdir again && tar -xf back.tar -C again
diff -r xplain again && echo "round trip: same"
