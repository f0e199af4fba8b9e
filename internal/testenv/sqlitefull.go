package testenv

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
)

// LimitPages makes the SQLite database db unable to grow past n pages
// more, as a full disk does: SQLite's max_page_count makes a write that
// needs a new page fail with SQLITE_FULL ("database or disk is full"), the
// code of a write the file system refuses for want of room. The limit is a
// setting of each connection, so it is set on every connection of the pool
// (all of them taken at once, and kept open as idle ones).
func LimitPages(tb testing.TB, db *sql.DB, n int) {
	tb.Helper()
	ctx := context.Background()
	var pages int
	if err := db.QueryRowContext(ctx, `PRAGMA page_count`).Scan(&pages); err != nil {
		tb.Fatal(err)
	}
	conns := make([]*sql.Conn, db.Stats().MaxOpenConnections)
	for i := range conns {
		c, err := db.Conn(ctx)
		if err != nil {
			tb.Fatal(err)
		}
		conns[i] = c
	}
	for _, c := range conns {
		if _, err := c.ExecContext(ctx, fmt.Sprintf(`PRAGMA max_page_count = %d`, pages+n)); err != nil {
			tb.Fatal(err)
		}
		c.Close()
	}
}
