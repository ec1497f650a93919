// `Sys.unreachable`: why a path names nothing this process can reach, as the kernel says it.
import Glibc
import Testing

@_spi(Internals) @testable import LinuxSystem

struct UnreachableTests {
    @Test func aPathIsReachableOrSaysWhyNot() {
        #expect(Sys.unreachable("/etc/passwd") == nil)
        #expect(Sys.unreachable("/nonexistent/x")?.errno == .noSuchFileOrDirectory)
        #expect(Sys.unreachable("/etc/passwd/x")?.errno == Errno(rawValue: ENOTDIR))
        #expect(Sys.unreachable("/tmp/" + String(repeating: "a", count: 300))?.errno == Errno(rawValue: ENAMETOOLONG))
    }
}
