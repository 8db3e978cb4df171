package engine

import (
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Calendar words in a query ("yesterday", "last Wednesday", "this
// morning") mean the asker's calendar: the search is read in the time zone
// of the process that asks (its TZ, else the system's), not the daemon's,
// which may have been started under another.

// localZone names this process's time zone for a search request: the TZ
// environment variable, else the zone /etc/localtime links to; "" when
// neither names one (the offset then stands for it: SearchRequest).
func localZone() string {
	if tz, ok := os.LookupEnv("TZ"); ok {
		tz = strings.TrimPrefix(tz, ":")
		if i := strings.Index(tz, "zoneinfo/"); i >= 0 {
			tz = tz[i+len("zoneinfo/"):]
		}
		if tz == "" {
			return "UTC" // TZ set and empty: UTC, as the C library reads it
		}
		return tz
	}
	if target, err := os.Readlink("/etc/localtime"); err == nil {
		if i := strings.Index(target, "zoneinfo/"); i >= 0 {
			return filepath.ToSlash(target[i+len("zoneinfo/"):])
		}
	}
	return ""
}

// requestZone is the location a search request is read in: its named
// zone, else a fixed zone of its offset, else this process's.
func requestZone(req SearchRequest) *time.Location {
	if req.TimeZone != "" {
		if loc, err := time.LoadLocation(req.TimeZone); err == nil {
			return loc
		}
	}
	if req.UTCOffset != nil {
		return time.FixedZone("", *req.UTCOffset)
	}
	return time.Local
}

// withLocalZone fills in the asker's time zone in req (see localZone).
func withLocalZone(req SearchRequest) SearchRequest {
	if req.TimeZone == "" && req.UTCOffset == nil {
		req.TimeZone = localZone()
		_, off := time.Now().Zone()
		req.UTCOffset = &off
	}
	return req
}
