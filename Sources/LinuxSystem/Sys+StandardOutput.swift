internal import CLinuxSystem
import Glibc

extension Sys {
    /// The corresponding C functions are `fflush(stdout)` and `ferror(stdout)`: standard output written out; nil
    /// when every write to it succeeded, else the failure (its errno when the flush failed, 0 when an earlier write
    /// did: `print` does not say).
    package static func flushStandardOutput() -> SystemCallError? {
        guard cls_flush_standard_output() != 0 else { return nil }
        return SystemCallError(Errno(rawValue: errno), call: "write(standard output)")
    }
}
