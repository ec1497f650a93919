// The registry: every suite of the kernel test runner, in the order they run. Add yours here.
let allSuites: [KernelTestSuite] = [
    VirtualPadSuite.suite,
    DeviceSuite.suite,
    EngineSuite.suite,
    AppSuite.suite,
    LatePadSuite.suite,
    ProcessSuite.suite,
    CLibrarySuite.suite,
    FaultSuite.suite,
    AppUdevSuite.suite,
    EmulationSuite.suite,
    FFMemlessSuite.suite,
    AudioSuite.suite,
    EngineAudioSuite.suite,
    AppAudioSuite.suite,
    SoakSuite.suite,
    PeerSuite.suite,
]
