// Calling the C interface from Swift as a C program does: through the header's declarations (CLinuxHaptics),
// with error out-parameters read and freed the way the header says.
import CLinuxHaptics
import Testing

/// What an `lh_error` said, read before it was freed.
struct ReportedError: Equatable {
    var status: lh_status
    var message: String
    var jsonPath: String
}

/// Runs a call that takes an `lh_error **`; returns its status and, when it made one, the error (freed).
func calling(_ call: (UnsafeMutablePointer<OpaquePointer?>) -> lh_status) -> (lh_status, ReportedError?) {
    var error: OpaquePointer?
    let status = call(&error)
    guard let error else { return (status, nil) }
    defer { lh_error_free(error) }
    let reported = ReportedError(
        status: lh_error_code(error), message: String(cString: lh_error_message(error)),
        jsonPath: String(cString: lh_error_json_path(error)))
    return (status, reported)
}

/// `lh_pattern_load_data` on `text`: the pattern (the caller frees it) or the error.
func loadData(_ text: String) -> (pattern: OpaquePointer?, error: ReportedError?) {
    var pattern: OpaquePointer?
    let bytes = Array(text.utf8)
    let (status, error) = calling { error in lh_pattern_load_data(bytes, bytes.count, &pattern, error) }
    #expect((status == LH_OK) == (pattern != nil), "a pattern exactly when the call succeeds")
    #expect(error.map { $0.status == status } ?? (status == LH_OK), "the error's code is the call's status")
    return (pattern, error)
}

/// An AHAP document of one event.
func document(_ event: String) -> String {
    #"{"Version": 1, "Pattern": [{"Event": \#(event)}]}"#
}
