"""The table's gRPC edge: the servicer (`servicer`), the request's shape
(`validation`), who may act for a seat (`access`), an `Action` → a decider command
(`actions`), the views a seat is shown (`shown`, `views`, `seeds`) and `ListTables`
(`listing`). It calls the application (`kozyr.table.app`); nothing below imports it."""
