// libFuzzer's entry point for the fuzz target `ahap` (libFuzzer supplies `main`).
import HapticsFuzzing

@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    AHAPFuzzing.run(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}
