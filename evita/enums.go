package evita

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

	CatalogWarmingUp int32 = 0
	CatalogAlive     int32 = 1

	WaitForChangesVisible int32 = 2
)
