-- The W3C traceparent of the API request that wrote an event, when kpool
-- traces (--otlp-endpoint): the controllers' span for the work the event
-- causes links to the request's trace, in whichever process they run.
-- Empty when tracing is off.

-- +goose Up
ALTER TABLE events ADD COLUMN trace_parent TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE events DROP COLUMN trace_parent;
