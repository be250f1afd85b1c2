package record

// Delivery states.
const (
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	DeliveryFailed    = "failed"
)

// AlertDelivery is one alert event sent to one notification channel:
// a pending row is the retry queue, a finished one the delivery log.
type AlertDelivery struct {
	// ID is the row id.
	ID int64 `json:"id"`
	// EventID is the alert event delivered.
	EventID int64 `json:"event_id"`
	// Channel is the channel name (generic_url, chatapp1, email, ...).
	Channel string `json:"channel"`
	// Route is the routing rule that chose the channel ("" = the default:
	// every enabled channel).
	Route string `json:"route"`
	// Status is pending, delivered or failed.
	Status string `json:"status"`
	// Attempts is how many sends were tried.
	Attempts int `json:"attempts"`
	// CreatedTS is when the delivery was routed (Unix seconds).
	CreatedTS int64 `json:"created_ts"`
	// NextTS is when a pending delivery is tried next (Unix seconds).
	NextTS int64 `json:"next_ts"`
	// UpdatedTS is the last attempt (Unix seconds).
	UpdatedTS int64 `json:"updated_ts"`
	// Error is the last failure, without secrets or the remote body.
	Error string `json:"error"`
	// Event is the event as it fired (the payload source of retries).
	Event AlertEvent `json:"-"`
}
