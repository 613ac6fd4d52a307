package secrets_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/zeroagent/zero/secrets"
)

func Example() {
	dir, _ := os.MkdirTemp("", "secrets")
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "secrets.env")
	os.WriteFile(file, []byte("# the staging database\nDB_PASSWORD='s3cr3t-pw'\n"), 0o600)

	set, errs := secrets.Load(file, filepath.Join(dir, "workspace-secrets.env")) // a missing file is fine
	if len(errs) > 0 {
		fmt.Println(errs)
	}
	set = set.With("OPENAI_API_KEY", "sk-zero-own-key") // masked, never given to the agent

	// The system prompt shows names only.
	fmt.Println(set.Prompt())

	// Just before the tool runs, the aliases become values.
	args, missing := set.Expand(map[string]any{"code": "psql -W §§secret(db_password) # §§secret(NOPE)"})
	fmt.Println(args, missing)

	// What comes back is masked, whole or in chunks.
	fmt.Println(set.Mask("password s3cr3t-pw, key sk-zero-own-key"))
	st := set.NewStream()
	fmt.Printf("%q %q %q\n", st.Write("pw: s3cr"), st.Write("3t-pw."), st.Flush())
	// Output:
	// # the staging database
	// §§secret(DB_PASSWORD)
	// map[code:psql -W s3cr3t-pw # §§secret(NOPE)] [NOPE]
	// password §§secret(DB_PASSWORD), key §§secret(OPENAI_API_KEY)
	// "pw: " "§§secret(DB_PASSWORD)." ""
}
