// `Sys.writeDirect`, the write system call made in place: what it writes arrives whole, and a failure comes back
// as the same typed error, with the errno the kernel gave, that `Sys.write` throws.
import Testing

@_spi(Internals) @testable import LinuxSystem

struct WriteDirectTests {
    @Test func theBytesWrittenAreReadBackWholeAndTheCountIsReturned() throws {
        let ends = try Sys.pipe()
        defer {
            Sys.close(ends.read)
            Sys.close(ends.write)
        }
        let sent: [UInt8] = Array(0..<24)
        let written = try sent.withUnsafeBytes { (bytes) throws(SystemCallError) in
            try Sys.writeDirect(ends.write, bytes)
        }
        #expect(written == sent.count)
        var received = [UInt8](repeating: 0xFF, count: 64)
        let read = try received.withUnsafeMutableBytes { (bytes) throws(SystemCallError) in
            try Sys.read(ends.read, into: bytes)
        }
        #expect(Array(received.prefix(read)) == sent)
    }

    /// -1, not a descriptor just closed: tests run side by side, and another may have opened that number since.
    @Test func aDescriptorThatIsNoneFailsWithBadFileDescriptorNamingWrite() throws {
        let byte: [UInt8] = [1]
        #expect(throws: SystemCallError(.badFileDescriptor, call: "write")) {
            try byte.withUnsafeBytes { (bytes) throws(SystemCallError) in try Sys.writeDirect(-1, bytes) }
        }
    }

    @Test func aFullNonBlockingPipeFailsWithWouldBlockAfterAcceptingOnlyWholeWrites() throws {
        let ends = try Sys.pipe()
        defer {
            Sys.close(ends.read)
            Sys.close(ends.write)
        }
        let chunk = [UInt8](repeating: 7, count: 4096)
        var accepted = 0
        var failure: SystemCallError?
        while failure == nil, accepted < 16 << 20 {
            let result = chunk.withUnsafeBytes { bytes in
                Result { () throws(SystemCallError) in try Sys.writeDirect(ends.write, bytes) }
            }
            switch result {
            case .success(let count): accepted += count
            case .failure(let error): failure = error
            }
        }
        #expect(failure == SystemCallError(.wouldBlock, call: "write"))
        #expect(accepted > 0 && accepted % chunk.count == 0, "only whole chunks fit before the pipe is full")
    }
}
