// Every benchmark group of `make bench`, in report order. Each group lives in its own file.
let benchmarkGroups: [BenchmarkGroup] =
    [
        ahapBenchmarks,
        renderingBenchmarks,
        plannerBenchmarks,
        audioBenchmarks,
        engineBenchmarks,
        startPathBenchmarks,
        lockBenchmarks,
        engineKernelBenchmarks,
        feedbackKernelBenchmarks,
        engineAudioKernelBenchmarks,
    ] + driverKernelBenchmarks + voiceCoilKernelBenchmarks + hdRumbleKernelBenchmarks + pidKernelBenchmarks
