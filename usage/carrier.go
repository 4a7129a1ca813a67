package usage

import (
	"fmt"
	"slices"
)

// Carrier is where a site states something about the use of its content.
// It marshals to its name, as [Carrier.String] gives it.
type Carrier uint8

// The carriers.
const (
	NoCarrier           Carrier = iota // not stated
	RobotsTxt                          // a line of robots.txt
	TDMRepFile                         // the origin's /.well-known/tdmrep.json
	ContentUsageHeader                 // a Content-Usage header field
	ContentSignalHeader                // a Content-Signal header field
	TDMHeader                          // a tdm-reservation or tdm-policy header field
	XRobotsTagHeader                   // an X-Robots-Tag header field
	RobotsTagHeader                    // a Robots-Tag header field
	MetaElement                        // a <meta> element of an HTML head
	LicenseDocument                    // an RSL licence
	numCarriers
)

var carrierNames = [numCarriers]string{"none", "robots.txt", "tdmrep.json", "Content-Usage", "Content-Signal",
	"tdm-reservation", "X-Robots-Tag", "Robots-Tag", "meta", "license"}

// String returns the carrier's name: "robots.txt", "tdmrep.json",
// "Content-Usage", "Content-Signal", "tdm-reservation", "X-Robots-Tag",
// "Robots-Tag", "meta", "license", or "none".
func (c Carrier) String() string {
	if c < numCarriers {
		return carrierNames[c]
	}
	return fmt.Sprintf("Carrier(%d)", uint8(c))
}

// MarshalText returns the carrier's name.
func (c Carrier) MarshalText() ([]byte, error) {
	if c >= numCarriers {
		return nil, fmt.Errorf("usage: unknown carrier %d", uint8(c))
	}
	return []byte(c.String()), nil
}

// UnmarshalText reads a carrier's name.
func (c *Carrier) UnmarshalText(b []byte) error {
	i := slices.Index(carrierNames[:], string(b))
	if i < 0 {
		return fmt.Errorf("usage: unknown carrier %q", b)
	}
	*c = Carrier(i)
	return nil
}
