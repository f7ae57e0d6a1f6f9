package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/identitylib/identity"
)

// auditList prints one page of a workspace's audit trail, newest first:
// identityd audit list -workspace SLUG [-actor kind:id] [-target kind:id]
// [-action A] [-outcome success|failure] [-since RFC3339] [-until RFC3339]
// [-limit N] [-cursor C] [-json].
func auditList(ctx context.Context, e *env, fs *flag.FlagSet, args []string) error {
	slug := fs.String("workspace", "", "the `SLUG` of the workspace")
	filter := auditFilterFlags(fs)
	limit := fs.Int("limit", identity.DefaultPageLimit, fmt.Sprintf("print at most `N` records (1-%d)", identity.MaxPageLimit))
	cursor := fs.String("cursor", "", "go on after the page that printed the cursor `C` (on standard error, or nextCursor in JSON)")
	asJSON := fs.Bool("json", false, "print the page as JSON: {\"records\": [...], \"hasMore\": BOOL, \"nextCursor\": C}")
	if _, err := parseCommand(fs, args, nil, "workspace"); err != nil {
		return err
	}
	f, err := filter.parse(fs)
	if err != nil {
		return err
	}
	if *limit < 1 || *limit > identity.MaxPageLimit {
		return usagef(fs, "-limit must be between 1 and %d", identity.MaxPageLimit)
	}
	return e.inWorkspace(ctx, *slug, func(ws *identity.Workspace) error {
		page, err := ws.ListAuditRecords(ctx, &f, &identity.AuditPageOptions{Cursor: *cursor, Limit: *limit})
		if err != nil {
			return err
		}
		if *asJSON {
			enc := json.NewEncoder(e.stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(page)
		}
		if err := printAuditTable(e.stdout, page.Records); err != nil {
			return err
		}
		if page.HasMore {
			fmt.Fprintf(e.stderr, "more records: the next page is -cursor %s\n", page.NextCursor)
		}
		return nil
	})
}

// auditFilter holds the filter flags of audit list until they are
// parsed.
type auditFilter struct {
	actor, target, action, outcome, since, until *string
}

// auditFilterFlags defines the filter flags of audit list on fs.
func auditFilterFlags(fs *flag.FlagSet) auditFilter {
	return auditFilter{
		actor: fs.String("actor", "", "only what the actor `kind:id` did, such as operator:1000, api_key:KEY_ID or user:42, or system:\n"+
			"(an actor without an id); kind is one of "+actorKinds()),
		target: fs.String("target", "", "only what was done to `kind:id`, such as user:42, role:3 or workspace:acme; kind is one of\n"+
			strings.Join(identity.AuditTargetKinds(), ", ")),
		action:  fs.String("action", "", "only the action `A`, such as user.created, or those starting with a prefix ending in \".\", such as sign_in."),
		outcome: fs.String("outcome", "", "only the records whose outcome is `OUTCOME`: success or failure"),
		since:   fs.String("since", "", "only the records written at or after `TIME` (RFC 3339, such as 2026-01-31T00:00:00Z)"),
		until:   fs.String("until", "", "only the records written before `TIME` (RFC 3339)"),
	}
}

// actorKinds lists the kinds of actor for a flag's help.
func actorKinds() string {
	var kinds []string
	for _, k := range identity.ActorKinds() {
		kinds = append(kinds, string(k))
	}
	return strings.Join(kinds, ", ")
}

// parse returns the filter the flags give. The actor and the target are
// read by identity.ParseAuditRef, as the REST API reads them; the library
// checks the kinds, the action and the outcome, and says what is wrong
// with them; parse reads the times, whose form only the command line
// has.
func (a auditFilter) parse(fs *flag.FlagSet) (identity.AuditFilter, error) {
	var f identity.AuditFilter
	kind, id, err := identity.ParseAuditRef("actor", *a.actor)
	if err != nil {
		return f, err
	}
	f.ActorKind, f.ActorID = identity.ActorKind(kind), id
	if f.TargetKind, f.TargetID, err = identity.ParseAuditRef("target", *a.target); err != nil {
		return f, err
	}
	f.Action, f.Outcome = *a.action, identity.AuditOutcome(*a.outcome)
	if f.Since, err = parseTimeFlag(fs, "since", *a.since); err != nil {
		return f, err
	}
	if f.Until, err = parseTimeFlag(fs, "until", *a.until); err != nil {
		return f, err
	}
	return f, nil
}

// parseTimeFlag parses the RFC 3339 time of the flag name; "" is none.
func parseTimeFlag(fs *flag.FlagSet, name, value string) (time.Time, error) {
	if value == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339, value)
	if err != nil {
		return time.Time{}, usagef(fs, "-%s %q is not an RFC 3339 time such as 2026-01-31T00:00:00Z", name, value)
	}
	return t, nil
}

// printAuditTable prints records as a table, one record a line: the time
// (UTC, to the second), the actor and the target as kind:id (display),
// the action, the outcome, the reason and the client's address ("-" for
// none).
func printAuditTable(w io.Writer, records []identity.AuditRecord) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tACTOR\tACTION\tTARGET\tOUTCOME\tREASON\tADDRESS")
	for _, r := range records {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Time.UTC().Format(time.RFC3339),
			auditParty(string(r.Actor.Kind), r.Actor.ID, r.Actor.Display), cell(string(r.Action)),
			auditParty(r.Target.Kind, r.Target.ID, r.Target.Display), cell(string(r.Outcome)),
			cell(r.Reason), cell(r.Request.Address))
	}
	return tw.Flush()
}

// auditParty renders an actor or a target: kind:id (display), without
// the id or the display when there is none, and without a display that
// only repeats the id.
func auditParty(kind, id, display string) string {
	s := kind
	if id != "" {
		s += ":" + id
	}
	if display != "" && display != id {
		s += " (" + display + ")"
	}
	return cell(s)
}

// cell renders one cell of the table: "-" for nothing, and a value with
// a character that is not graphic (a tab, a newline, an escape sequence)
// quoted with Go's escapes, so that no value (a login someone tried, a
// name an API client chose) can break the table or drive the terminal.
func cell(s string) string {
	switch {
	case s == "":
		return "-"
	case strings.IndexFunc(s, func(r rune) bool { return !unicode.IsGraphic(r) }) >= 0:
		return strconv.QuoteToGraphic(s)
	}
	return s
}

// auditExport writes the whole audit trail of a workspace, oldest first,
// as JSON Lines: identityd audit export -workspace SLUG [-since T]
// [-o FILE].
func auditExport(ctx context.Context, e *env, fs *flag.FlagSet, args []string) error {
	slug := fs.String("workspace", "", "the `SLUG` of the workspace")
	since := fs.String("since", "", "only the records written at or after `TIME` (RFC 3339, such as 2026-01-31T00:00:00Z)")
	out := fs.String("o", "-", "the JSON Lines `FILE` to write, replaced only once the export is complete; - is standard output")
	if _, err := parseCommand(fs, args, nil, "workspace"); err != nil {
		return err
	}
	from, err := parseTimeFlag(fs, "since", *since)
	if err != nil {
		return err
	}
	return e.inWorkspace(ctx, *slug, func(ws *identity.Workspace) error {
		write := func(w io.Writer) (int, error) { return exportAudit(ctx, ws, from, w) }
		if *out == "-" {
			w := bufio.NewWriterSize(e.stdout, exportBuffer)
			if _, err := write(w); err != nil {
				return err
			}
			return w.Flush()
		}
		if isDatabaseFile(*out, e.dbPath) {
			return fmt.Errorf("%s is the database itself: write the export to another file", *out)
		}
		n, err := e.writeFile(*out, write)
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stderr, "exported %d audit records from workspace %s\n", n, *slug)
		return nil
	})
}

// exportAudit writes the records of ws's trail written at or after since
// (zero: all of them) to w, oldest first, one JSON object a line, and
// returns how many. It reads a page at a time, each in a read transaction
// of its own, going on from the last record of the page before, so that
// its memory stays that of one page however long the trail; records
// appended meanwhile are written too, up to the last page.
func exportAudit(ctx context.Context, ws *identity.Workspace, since time.Time, w io.Writer) (int, error) {
	filter := &identity.AuditFilter{Since: since}
	opts := &identity.AuditPageOptions{Limit: identity.MaxPageLimit, Oldest: true}
	var line []byte
	n := 0
	for {
		page, err := ws.ListAuditRecords(ctx, filter, opts)
		if err != nil {
			return n, err
		}
		for _, r := range page.Records {
			if line, err = appendAuditLine(line[:0], r); err != nil {
				return n, err
			}
			if _, err := w.Write(line); err != nil {
				return n, err
			}
			n++
		}
		if !page.HasMore {
			return n, nil
		}
		opts.Cursor = page.NextCursor
	}
}

// appendAuditLine appends the JSON line of r to b: the form of audit
// export and of serve -audit-log alike.
func appendAuditLine(b []byte, r identity.AuditRecord) ([]byte, error) {
	j, err := json.Marshal(r)
	if err != nil {
		return b, fmt.Errorf("encode audit record %s: %w", r.ID, err)
	}
	return append(append(b, j...), '\n'), nil
}
