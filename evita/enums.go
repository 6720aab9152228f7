package evita

import "fmt"

// Enum values of the evitaDB protocol (our .proto carries enums as int32).
const (
	ScopeLive     int32 = 0
	ScopeArchived int32 = 1

	MayExist     int32 = 0
	MustNotExist int32 = 1
	MustExist    int32 = 2

	InnerRecordNone        int32 = 0
	InnerRecordLowestPrice int32 = 1
	InnerRecordSum         int32 = 2
	InnerRecordUnknown     int32 = 3

	CatalogWarmingUp      int32 = 0
	CatalogAlive          int32 = 1
	CatalogGoingAlive     int32 = 5
	CatalogBeingActivated int32 = 6

	WaitForChangesVisible int32 = 2
)

var catalogStates = []string{"WARMING_UP", "ALIVE", "UNKNOWN_CATALOG_STATE", "CORRUPTED", "INACTIVE", "GOING_ALIVE",
	"BEING_ACTIVATED", "BEING_DEACTIVATED", "BEING_CREATED", "BEING_DELETED", "MISSING", "OUT_OF_DATE", "BEING_UPGRADED"}

// CatalogStateName names a catalog state as the server does.
func CatalogStateName(s int32) string {
	if s >= 0 && int(s) < len(catalogStates) {
		return catalogStates[s]
	}
	return fmt.Sprintf("state %d", s)
}

// CatalogStateByName is the state the engine names (ok false for a name it does not know).
func CatalogStateByName(name string) (int32, bool) {
	for i, n := range catalogStates {
		if n == name {
			return int32(i), true
		}
	}
	return 0, false
}
