package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/user"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/auth"
)

// newToken is kpool token: API tokens, made and revoked on the database
// itself (like kpool migrate), so that the first admin needs no token.
func newToken() *cobra.Command {
	var database string
	cmd := &cobra.Command{
		Use:   "token",
		Short: "Create, list and revoke API tokens (on the database directly)",
		Args:  cobra.ArbitraryArgs,
		RunE:  groupRun,
	}
	cmd.PersistentFlags().StringVar(&database, "database", defaultDatabase(), "sqlite:PATH or postgres://… (KPOOL_DATABASE)")
	bindEnv(cmd.PersistentFlags(), map[string]string{"database": "KPOOL_DATABASE"})

	var req auth.TokenRequest
	var role, expires string
	var platforms []string
	create := &cobra.Command{
		Use:   "create",
		Short: "Create a token and print it (once: only its hash is stored)",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			d, err := lifetime(kpool.Role(role), expires)
			if err != nil {
				return err
			}
			req.Role, req.Expires, req.CreatedBy = kpool.Role(role), d, tokenMaker()
			for _, p := range platforms {
				req.Scope.Platforms = append(req.Scope.Platforms, kpool.PlatformType(p))
			}
			return withTokens(c.Context(), database, func(ts kpool.TokenStore) error {
				secret, t, err := createToken(c.Context(), ts, req, time.Now())
				if err != nil {
					return err
				}
				fmt.Fprintln(c.OutOrStdout(), secret)
				fmt.Fprintf(c.ErrOrStderr(), "%s: store it now, it is not shown again\n", describeToken(t))
				return nil
			})
		},
	}
	create.Flags().StringVar(&req.User, "user", "", "e-mail address of the token's holder")
	create.Flags().StringVar(&role, "role", string(kpool.RoleUser), "user, admin or controller")
	create.Flags().StringSliceVar(&req.ControllerNames, "controller-name", nil, "a controller name the token may report status under (role controller; repeat for several)")
	create.Flags().StringArrayVar(&req.Groups, "group", nil, "a group the token's holder is in, for credentials granted to group:NAME (roles user and admin; repeat for several)")
	create.Flags().StringSliceVar(&platforms, "platform", nil, "role controller: a platform whose pools it may report on (required; repeat for several): "+platformNames())
	create.Flags().StringSliceVar(&req.Scope.Clusters, "cluster-id", nil, "role controller: report only on pools of this cluster (an ID; repeat for several)")
	create.Flags().StringSliceVar(&req.Scope.Teams, "team", nil, "role controller: report only on pools of clusters of this team (repeat for several)")
	create.Flags().StringVar(&expires, "expires", "", "lifetime, such as 30d or 12h, or never (default: 90d for roles user and admin, never for controller)")

	list := &cobra.Command{
		Use:   "list",
		Short: "List tokens (never their secrets)",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return withTokens(c.Context(), database, func(ts kpool.TokenStore) error {
				list, err := ts.Tokens(c.Context())
				if err != nil {
					return err
				}
				return printTokens(c.OutOrStdout(), list, time.Now())
			})
		},
	}
	revoke := &cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke a token: it is refused from then on",
		Args:  idArg("token"),
		RunE: func(c *cobra.Command, args []string) error {
			return withTokens(c.Context(), database, func(ts kpool.TokenStore) error {
				if err := ts.RevokeToken(c.Context(), args[0], time.Now().UTC()); err != nil {
					return err
				}
				fmt.Fprintf(c.OutOrStdout(), "token %s revoked\n", args[0])
				return nil
			})
		},
	}
	cmd.AddCommand(create, list, revoke)
	return cmd
}

// createToken checks and stores a new token; it returns the secret.
func createToken(ctx context.Context, ts kpool.TokenStore, req auth.TokenRequest, now time.Time) (string, *kpool.Token, error) {
	t, err := auth.CheckToken(req, now)
	if err != nil {
		return "", nil, err
	}
	secret, hash := auth.NewTokenSecret()
	if err := ts.CreateToken(ctx, t, hash); err != nil {
		return "", nil, err
	}
	return secret, t, nil
}

// describeToken says what token create made: whose token, its role and
// groups, and when it expires (or that it never does).
func describeToken(t *kpool.Token) string {
	in := ""
	if len(t.Groups) > 0 {
		in = ", in " + strings.Join(t.Groups, ", ")
	}
	until := "never expires"
	if t.ExpiresAt != nil {
		until = "expires " + t.ExpiresAt.UTC().Format(time.RFC3339)
	}
	return fmt.Sprintf("token %s for %s (%s%s), %s", t.ID, t.User, t.Role, in, until)
}

// lifetime is the lifetime --expires gives a token of role: when it gives
// none (or is empty, as an unset variable in a script makes it), the
// role's default, so that a person's token expires unless never is asked
// for in so many words.
func lifetime(role kpool.Role, expires string) (time.Duration, error) {
	if strings.TrimSpace(expires) == "" {
		return role.DefaultLifetime(), nil
	}
	d, err := auth.ParseExpiry(expires)
	if err != nil {
		return 0, fmt.Errorf("--expires: %v", err)
	}
	return d, nil
}

// withTokens opens the database's token store for fn.
func withTokens(ctx context.Context, database string, fn func(kpool.TokenStore) error) error {
	st, err := openStore(ctx, database)
	if err != nil {
		return err
	}
	defer st.Close()
	ts, ok := st.(kpool.TokenStore)
	if !ok {
		return fmt.Errorf("--database %s: this store keeps no tokens", redact(database))
	}
	return fn(ts)
}

// printTokens prints the tokens as a table. EXPIRES is the time a token
// expires, marked (expired) once that is past at now, or never.
func printTokens(out io.Writer, list []*kpool.Token, now time.Time) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tUSER\tROLE\tCONTROLLER NAMES\tSCOPE\tGROUPS\tCREATED\tEXPIRES\tLAST USED\tREVOKED")
	at := func(t *time.Time) string {
		if t == nil {
			return "-"
		}
		return t.UTC().Format(time.RFC3339)
	}
	names := func(l []string, sep string) string {
		if len(l) == 0 {
			return "-"
		}
		return strings.Join(l, sep)
	}
	for _, t := range list {
		expires := auth.NeverExpires
		if t.ExpiresAt != nil {
			expires = at(t.ExpiresAt)
			if !now.Before(*t.ExpiresAt) {
				expires += " (expired)"
			}
		}
		// Group names may hold commas (cn=ops,ou=groups).
		scope := "-"
		if t.Role == kpool.RoleController {
			scope = strings.ReplaceAll(t.Scope.String(), " ", "_")
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, t.User, t.Role, names(t.ControllerNames, ","), scope, names(t.Groups, "|"),
			at(&t.CreatedAt), expires, at(t.LastUsedAt), at(t.RevokedAt))
	}
	return w.Flush()
}

// tokenMaker records who ran kpool token create: the OS account and host,
// since no API identity is involved (the command works on the database).
func tokenMaker() string {
	who := "unknown"
	if u, err := user.Current(); err == nil && u.Username != "" {
		who = u.Username
	}
	if h, err := os.Hostname(); err == nil && h != "" {
		who += "@" + h
	}
	return "kpool token create (" + who + ")"
}
