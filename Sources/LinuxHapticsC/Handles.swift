// The C side's view of Swift objects: opaque pointers that own one reference each, and C strings.
import Glibc

/// An object given to C as an opaque pointer (`lh_pattern *`, `lh_engine *`, `lh_error *`): the pointer holds
/// one reference, which the matching free call gives back.
enum Handle {
    static func retain(_ object: AnyObject) -> OpaquePointer {
        OpaquePointer(Unmanaged.passRetained(object).toOpaque())
    }

    /// The object behind a handle the caller still owns.
    static func object<T: AnyObject>(_ handle: OpaquePointer, as type: T.Type) -> T {
        Unmanaged<T>.fromOpaque(UnsafeRawPointer(handle)).takeUnretainedValue()
    }

    /// Gives back the handle's reference: the object goes when nothing else holds it.
    static func release<T: AnyObject>(_ handle: OpaquePointer, as type: T.Type) {
        Unmanaged<T>.fromOpaque(UnsafeRawPointer(handle)).release()
    }
}

/// C strings the library hands out.
enum CString {
    /// A `malloc`ed copy of `text`, which the receiver frees with `free` (`lh_string_free`).
    static func copy(_ text: String) -> UnsafeMutablePointer<CChar> {
        guard let copy = strdup(text) else { fatalError("out of memory copying a string of \(text.utf8.count) bytes") }
        return copy
    }

    /// "" that is never freed, for the calls that answer NULL with an empty string.
    static let empty = Static("")

    /// A C string made once and never freed or written, so any thread may read it.
    struct Static: @unchecked Sendable {
        let pointer: UnsafePointer<CChar>

        init(_ text: String) {
            pointer = UnsafePointer(CString.copy(text))
        }
    }
}
