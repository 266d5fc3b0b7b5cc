package fusepgx

import (
	"database/sql"
	"errors"

	"github.com/jackc/pgx/v5"
)

// answerClasses are the SQLSTATE classes DefaultClassify counts as the
// database's answer: 22 data exception, 23 integrity constraint violation,
// 28 invalid authorization, 42 syntax error or access rule violation.
var answerClasses = [...]string{"22", "23", "28", "42"}

// DefaultClassify counts as failures what says the database is in trouble
// and as answers (nil) what says the call was wrong: pgx.ErrNoRows, and
// errors with an SQLState() string method (pgx's *pgconn.PgError) whose
// SQLSTATE class is 22, 23, 28 or 42: bad data, a constraint violated, a
// permission denied, a syntax error. Every other error is a failure:
// refused and broken connections, timeouts, SQLSTATEs such as 08
// (connection), 53 (insufficient resources), 57 (operator intervention, a
// cancelled statement). The caller's own context.Canceled is returned as
// it is, and the executor ignores it. These are fusesql's rules.
func DefaultClassify(err error) error {
	if err == nil || errors.Is(err, pgx.ErrNoRows) || errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	var st interface{ SQLState() string }
	if errors.As(err, &st) {
		code := st.SQLState()
		for _, c := range answerClasses {
			if len(code) >= 2 && code[:2] == c {
				return nil
			}
		}
	}
	return err
}
