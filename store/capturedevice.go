package store

import (
	"context"
	"errors"
)

// captureDeviceKey is the setting holding the hub capture's running
// interface ("" once a person stopped it), read at start to resume.
const captureDeviceKey = "capture.device"

// RememberCaptureDevice keeps the interface the hub capture runs on (""
// when a person stopped it): capture.Memory.
func (db *DB) RememberCaptureDevice(ctx context.Context, device string) error {
	return db.PutSetting(ctx, captureDeviceKey, device)
}

// RememberedCaptureDevice is the interface kept by RememberCaptureDevice,
// "" when none was.
func (db *DB) RememberedCaptureDevice(ctx context.Context) (string, error) {
	v, err := db.GetSetting(ctx, captureDeviceKey)
	if errors.Is(err, ErrNotFound) {
		return "", nil
	}
	return v, err
}
