package watch

import (
	"bufio"
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/pipeline"
	"github.com/sluice-dev/sluice/pipeline/state"
)

// TestScenarios runs the scripts in testdata/*.txt, in the spirit of
// fsnotify's own testdata scripts. Each line is a command:
//
//	exclude PATTERN          add a source.exclude pattern (before start)
//	debounce off|DURATION    set watch.debounce (before start); off is
//	                         NoDebounce
//	start                    open the store and manifest and run a Loop
//	stop                     stop the Loop gracefully and close the stores
//	restart                  stop, then start
//	wait                     return once every change so far is processed
//	write PATH TEXT          create or replace a file (\n in TEXT is a newline)
//	append PATH TEXT         append to a file
//	truncate PATH N          cut a file to N bytes
//	atomic-save PATH TEXT    write PATH.tmp, then rename it over PATH
//	words PATH N             write N distinct words (a multi-chunk document)
//	binary PATH              write a file with a NUL byte (a failing document)
//	mv FROM TO               rename a file or folder, as rename(2) does (it
//	                         replaces an empty folder); @out/... is outside the root
//	mkdir -p PATH            create a folder and its parents
//	rm [-r] PATH             remove a file, or a folder with -r
//	ln TARGET PATH           create a symbolic link to TARGET (as written)
//	chmod MODE PATH          change permissions (octal MODE)
//	mkfifo PATH              create a named pipe (not a regular file); the
//	                         scenario is skipped where there are none
//	expect-docs [ID...]      the store's documents are exactly these
//	expect-chunks ID N       the store holds N chunks of ID
//	expect-text ID TEXT      a chunk of ID contains TEXT
//	expect-failed [ID...]    the dead-letter table lists exactly these
//	expect-reason ID TEXT    the dead-letter entry of ID says TEXT
//	expect-run-agrees        stop the Loop, run `sluice run` (an incremental
//	                         pipeline.Run over the whole folder) on its store
//	                         and manifest, expect it to find everything up to
//	                         date (no node, failure or reason changes), and
//	                         start again
//	attempts ID              remember how often ID has failed
//	expect-attempts ID +N    ID failed N more times since attempts ID
//	expect-clean             the store equals a clean run of the folder and
//	                         the manifest records exactly its documents
//
// Blank lines and lines starting with # are ignored. Every script ends
// with an implicit wait and expect-clean.
func TestScenarios(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios in testdata: %v", err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".txt")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			runScript(t, file)
		})
	}
}

func runScript(t *testing.T, file string) {
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	e := newEnv(t)
	e.attempts = map[string]int{}
	sc := bufio.NewScanner(f)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		e.step(file+":"+strconv.Itoa(line), strings.Fields(text), text)
		if t.Failed() {
			return
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if e.loop == nil {
		t.Fatalf("%s: the script never starts the loop", file)
	}
	e.wait()
	e.checkClean()
}

// rest returns the text after the first n fields of line, with \n
// turned into newlines.
func rest(line string, n int) string {
	for range n {
		line = strings.TrimSpace(line)
		if i := strings.IndexAny(line, " \t"); i >= 0 {
			line = line[i:]
		} else {
			line = ""
		}
	}
	return strings.ReplaceAll(strings.TrimSpace(line), `\n`, "\n")
}

func (e *env) step(pos string, args []string, line string) {
	t := e.t
	t.Helper()
	fail := func(format string, a ...any) { t.Helper(); t.Errorf(pos+": "+format, a...) }
	need := func(n int) bool {
		if len(args) < n {
			fail("%s needs %d arguments", args[0], n-1)
			return false
		}
		return true
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			fail("%v", err)
		}
	}
	switch args[0] {
	case "exclude":
		if need(2) {
			e.exclude = append(e.exclude, args[1])
		}
	case "debounce":
		if need(2) {
			d := NoDebounce
			if args[1] != "off" {
				var err error
				d, err = time.ParseDuration(args[1])
				must(err)
			}
			e.cfg.Debounce = d
		}
	case "start":
		e.start(nil)
		e.waitReady()
	case "stop":
		must(e.stop())
	case "restart":
		must(e.stop())
		e.start(nil)
		e.waitReady()
	case "wait":
		e.wait()
	case "write":
		if need(2) {
			e.writeFile(args[1], rest(line, 2))
		}
	case "append":
		if need(3) {
			f, err := os.OpenFile(e.path(args[1]), os.O_APPEND|os.O_WRONLY, 0)
			must(err)
			if err == nil {
				_, err = f.WriteString(rest(line, 2))
				must(err)
				must(f.Close())
			}
		}
	case "truncate":
		if need(3) {
			n, err := strconv.ParseInt(args[2], 10, 64)
			must(err)
			must(os.Truncate(e.path(args[1]), n))
		}
	case "atomic-save":
		if need(3) {
			tmp := args[1] + ".tmp"
			e.writeFile(tmp, rest(line, 2))
			must(os.Rename(e.path(tmp), e.path(args[1])))
		}
	case "words":
		if need(3) {
			n, err := strconv.Atoi(args[2])
			must(err)
			var b strings.Builder
			for i := range n {
				b.WriteString("word" + strconv.Itoa(i))
				if i%10 == 9 {
					b.WriteString(".\n")
				} else {
					b.WriteString(" ")
				}
			}
			e.writeFile(args[1], b.String())
		}
	case "binary":
		if need(2) {
			e.writeFile(args[1], "text\x00more")
		}
	case "mv":
		if need(3) {
			must(os.MkdirAll(filepath.Dir(e.path(args[2])), 0o755))
			must(syscall.Rename(e.path(args[1]), e.path(args[2]))) // os.Rename refuses to replace a folder
		}
	case "ln":
		if need(3) {
			must(os.Symlink(filepath.FromSlash(args[1]), e.path(args[2])))
		}
	case "chmod":
		if need(3) {
			mode, err := strconv.ParseUint(args[1], 8, 32)
			must(err)
			must(os.Chmod(e.path(args[2]), os.FileMode(mode)))
		}
	case "mkfifo":
		if need(2) {
			must(mkfifo(t, e.path(args[1])))
		}
	case "mkdir":
		if need(3) && args[1] == "-p" {
			must(os.MkdirAll(e.path(args[2]), 0o755))
		}
	case "rm":
		switch {
		case len(args) == 3 && args[1] == "-r":
			must(os.RemoveAll(e.path(args[2])))
		case need(2):
			must(os.Remove(e.path(args[1])))
		}
	case "expect-docs":
		if got := docsOf(nodesOf(t, e.store)); !slices.Equal(got, args[1:]) {
			fail("documents in the store: %q, want %q", got, args[1:])
		}
	case "expect-chunks":
		if need(3) {
			want, err := strconv.Atoi(args[2])
			must(err)
			n := 0
			for _, node := range nodesOf(t, e.store) {
				if node.RefDocID == args[1] {
					n++
				}
			}
			if n != want {
				fail("%s has %d chunks in the store, want %d", args[1], n, want)
			}
		}
	case "expect-text":
		if need(3) {
			want := rest(line, 2)
			found := false
			for _, node := range nodesOf(t, e.store) {
				found = found || (node.RefDocID == args[1] && strings.Contains(node.Text, want))
			}
			if !found {
				fail("no chunk of %s contains %q", args[1], want)
			}
		}
	case "expect-failed":
		fails, err := e.state.Failures(context.Background())
		must(err)
		var got []string
		for _, f := range fails {
			got = append(got, f.ID)
		}
		if !slices.Equal(got, args[1:]) {
			fail("failed documents: %q, want %q", got, args[1:])
		}
	case "expect-reason":
		if need(3) {
			want := rest(line, 2)
			fails, err := e.state.Failures(context.Background())
			must(err)
			i := slices.IndexFunc(fails, func(f state.Failure) bool { return f.ID == args[1] })
			switch {
			case i < 0:
				fail("%s is not in the dead-letter table", args[1])
			case !strings.Contains(fails[i].Reason, want):
				fail("%s failed with %q, want it to say %q", args[1], fails[i].Reason, want)
			}
		}
	case "expect-run-agrees":
		must(e.stop())
		e.runAgrees(fail)
		e.start(nil)
		e.waitReady()
	case "attempts":
		if need(2) {
			e.attempts[args[1]] = e.failedAttempts(args[1])
		}
	case "expect-attempts":
		if need(3) {
			n, err := strconv.Atoi(strings.TrimPrefix(args[2], "+"))
			must(err)
			if got := e.failedAttempts(args[1]) - e.attempts[args[1]]; got != n {
				fail("%s failed %d more times, want %d", args[1], got, n)
			}
		}
	case "expect-clean":
		e.checkClean()
	default:
		fail("unknown command %q", args[0])
	}
}

// runAgrees runs a whole-folder incremental pipeline.Run, as `sluice run`
// does, on the store and manifest the stopped Loop left, and reports with
// fail whatever the run changes: a document added, updated or deleted, a
// node, or a failure or its reason. Watch mode must leave what a run leaves.
func (e *env) runAgrees(fail func(string, ...any)) {
	e.t.Helper()
	ctx := context.Background()
	e.open()
	defer e.closeStores()
	reasons := func() map[string]string {
		fails, err := e.state.Failures(ctx)
		if err != nil {
			e.t.Fatal(err)
		}
		m := map[string]string{}
		for _, f := range fails {
			m[f.ID] = f.Reason
		}
		return m
	}
	nodes, failed := view(nodesOf(e.t, e.store)), reasons()
	rep, err := pipeline.Run(ctx, e.options(e.store, e.state))
	if err != nil {
		e.t.Fatal(err)
	}
	if rep.FilesAdded+rep.FilesUpdated+rep.FilesDeleted > 0 {
		fail("the run after watch added %d, updated %d and deleted %d documents, want none", rep.FilesAdded, rep.FilesUpdated, rep.FilesDeleted)
	}
	if got := view(nodesOf(e.t, e.store)); !slices.Equal(got, nodes) {
		fail("the run after watch changed the store:\n before:\n  %s\n after:\n  %s", strings.Join(nodes, "\n  "), strings.Join(got, "\n  "))
	}
	if got := reasons(); !maps.Equal(got, failed) {
		fail("failures after watch: %q; after the run: %q", failed, got)
	}
}

// failedAttempts returns how often the dead-letter table says id failed.
func (e *env) failedAttempts(id string) int {
	e.t.Helper()
	fails, err := e.state.Failures(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	for _, f := range fails {
		if f.ID == id {
			return f.Attempts
		}
	}
	return 0
}
