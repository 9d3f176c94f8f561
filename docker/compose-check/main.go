// compose-check loads a Compose file the way `docker compose config` does, with compose-go (the
// library inside docker compose): schema validation, interpolation, normalisation and the
// consistency checks (depends_on, networks, volumes...). It prints the resolved project as JSON,
// or the loader's error and exits 1. Every profile is enabled so optional services are checked.
//
//	compose-check [-env KEY=VALUE ...] [-project-dir DIR] FILE
//
// -project-dir resolves relative paths against DIR instead of FILE's folder (docker compose
// --project-directory): tests load altered copies of the file as if they were in the repository.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/compose-spec/compose-go/v2/cli"
)

type envList []string

func (e *envList) String() string     { return fmt.Sprint(*e) }
func (e *envList) Set(v string) error { *e = append(*e, v); return nil }

func main() {
	var env envList
	flag.Var(&env, "env", "KEY=VALUE for interpolation (repeatable); the process environment is not used")
	dir := flag.String("project-dir", "", "folder relative paths are resolved against (default: FILE's folder)")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: compose-check [-env KEY=VALUE ...] [-project-dir DIR] FILE\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	file, err := filepath.Abs(flag.Arg(0))
	if err != nil {
		fail(err)
	}
	if *dir == "" {
		*dir = filepath.Dir(file)
	}
	opts, err := cli.NewProjectOptions([]string{file},
		cli.WithWorkingDirectory(*dir),
		cli.WithEnv(env),
		cli.WithProfiles([]string{"*"}),
		cli.WithName("cpi2"),
	)
	if err != nil {
		fail(err)
	}
	project, err := opts.LoadProject(context.Background())
	if err != nil {
		fail(err)
	}
	out, err := project.MarshalJSON()
	if err != nil {
		fail(err)
	}
	os.Stdout.Write(append(out, '\n'))
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "compose-check: %v\n", err)
	os.Exit(1)
}
