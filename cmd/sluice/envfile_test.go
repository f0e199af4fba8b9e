package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// unsetEnv unsets the variable name for the test and restores it after.
func unsetEnv(t *testing.T, name string) {
	t.Helper()
	t.Setenv(name, "") // registers the restore
	if err := os.Unsetenv(name); err != nil {
		t.Fatal(err)
	}
}

// TestEnvFile: a command reads ./.env (or --env-file) before its
// configuration, and the environment wins over the file. Here the file
// names the configuration (SLUICE_CONFIG), whose store path shows which
// configuration the run used.
func TestEnvFile(t *testing.T) {
	tests := []struct {
		name   string
		files  map[string]string
		env    string // SLUICE_CONFIG in the environment, "" for unset
		args   []string
		wantDB string // the store the run wrote
		notDBs []string
	}{
		{
			name:   "./.env is read",
			files:  map[string]string{".env": "# keys\nexport SLUICE_CONFIG=from-env-file.yaml\n"},
			wantDB: "from-env-file.db",
			notDBs: []string{".sluice/index.db"},
		},
		{
			name:   "the environment wins",
			files:  map[string]string{".env": "SLUICE_CONFIG=from-env-file.yaml\n"},
			env:    "from-environment.yaml",
			wantDB: "from-environment.db",
			notDBs: []string{"from-env-file.db"},
		},
		{
			name:   "--env-file names another file",
			files:  map[string]string{"deploy.env": `SLUICE_CONFIG="from-env-file.yaml"` + "\n"},
			args:   []string{"--env-file", "deploy.env"},
			wantDB: "from-env-file.db",
		},
		{
			name:   "no .env",
			wantDB: ".sluice/index.db",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			unsetEnv(t, configEnv)
			if tt.env != "" {
				t.Setenv(configEnv, tt.env)
			}
			dir := t.TempDir()
			files := map[string]string{
				"docs/a.md":             "Alpha document about pelicans.\n",
				"from-env-file.yaml":    "sink: {local: {path: from-env-file.db}}\n",
				"from-environment.yaml": "sink: {local: {path: from-environment.db}}\n",
			}
			for name, body := range tt.files {
				files[name] = body
			}
			writeFiles(t, dir, files)
			_, errOut, code := sluice(t, dir, append([]string{"run", "docs"}, tt.args...)...)
			if code != exitOK {
				t.Fatalf("run: exit %d: %s", code, errOut)
			}
			if _, err := os.Stat(filepath.Join(dir, tt.wantDB)); err != nil {
				t.Errorf("the run did not write %s: %v", tt.wantDB, err)
			}
			for _, db := range tt.notDBs {
				if _, err := os.Stat(filepath.Join(dir, db)); err == nil {
					t.Errorf("the run wrote %s", db)
				}
			}
		})
	}
}

// TestEnvFileErrors: a named file that is missing and a file that is not a
// dotenv file are usage errors naming the file and --env-file, and the
// message never quotes the file, which holds secrets.
func TestEnvFileErrors(t *testing.T) {
	const secret = "sk-do-not-print-me"
	tests := []struct {
		name  string
		files map[string]string
		args  []string
		want  string
	}{
		{"named file missing", nil, []string{"--env-file", "missing.env"},
			"--env-file missing.env: no such file or directory; name a dotenv file that exists and can be read, or leave --env-file out (--env-file /dev/null reads none)"},
		{"named folder", map[string]string{"dir.env/x": ""}, []string{"--env-file", "dir.env"},
			"--env-file dir.env: is a directory; name a dotenv file that exists and can be read, or leave --env-file out"},
		{"./.env not a dotenv file", map[string]string{".env": "OPENAI_API_KEY " + secret + "\n"}, nil,
			".env (the dotenv file read by default; --env-file names another): not a dotenv file; write one KEY=VALUE per line"},
		{"empty name", map[string]string{"x.env": "=" + secret + "\n"}, []string{"--env-file", "x.env"},
			`--env-file x.env: "" is not a variable name; use letters, digits and underscores`},
		{"name with spaces", map[string]string{"x.env": "OPENAI API KEY=" + secret + "\n"}, []string{"--env-file", "x.env"},
			`--env-file x.env: "OPENAI API KEY" is not a variable name`},
		{"name starting with a digit", map[string]string{"x.env": "1KEY=" + secret + "\n"}, []string{"--env-file", "x.env"},
			`--env-file x.env: "1KEY" is not a variable name`},
		{"named file not a dotenv file", map[string]string{"x.env": "export\n=" + secret + "\n"}, []string{"--env-file", "x.env"},
			"--env-file x.env: not a dotenv file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			unsetEnv(t, "OPENAI_API_KEY")
			dir := t.TempDir()
			writeFiles(t, dir, tt.files)
			out, errOut, code := sluice(t, dir, append([]string{"version"}, tt.args...)...)
			if code != exitUsage || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 and %q", code, errOut, tt.want)
			}
			if strings.Contains(out+errOut, secret) {
				t.Errorf("the output quotes the env file's secret: %q %q", out, errOut)
			}
		})
	}
}

// TestEnvFileUnreadableDefault: a ./.env that exists but cannot be read
// (here a symbolic link to itself) is named as the default file, not as
// --env-file, which was not given, with what to do about it.
func TestEnvFileUnreadableDefault(t *testing.T) {
	dir := t.TempDir()
	if err := os.Symlink(".env", filepath.Join(dir, ".env")); err != nil {
		t.Skip(err)
	}
	_, errOut, code := sluice(t, dir, "version")
	want := "sluice: .env (the dotenv file read by default; --env-file names another): too many levels of symbolic links; " +
		"make it a readable dotenv file, or name another with --env-file (--env-file /dev/null reads none)\n"
	if code != exitUsage || errOut != want {
		t.Errorf("exit %d, stderr %q; want exit 2, stderr %q", code, errOut, want)
	}
}

// TestEnvFileDirectory: a folder named .env, such as a Python virtual
// environment (python -m venv .env), is not a dotenv file: unless named
// with --env-file, commands run as without one; named, it is an error.
func TestEnvFileDirectory(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{".env/bin/activate": "export VIRTUAL_ENV=x\n"})
	if out, errOut, code := sluice(t, dir, "version"); code != exitOK || !strings.HasPrefix(out, "sluice ") {
		t.Errorf("version with a folder ./.env: exit %d, stdout %q, stderr %q; want exit 0", code, out, errOut)
	}
	if _, errOut, code := sluice(t, dir, "version", "--env-file", ".env"); code != exitUsage || !strings.Contains(errOut, "--env-file") || !strings.Contains(errOut, "is a directory") {
		t.Errorf("version --env-file .env (a folder): exit %d, stderr %q; want exit 2 naming --env-file and the folder", code, errOut)
	}
}
