// The shape every source shares (`NotifyBusSource`, `SourceStatus`, `SourceLoop`, `SourceError`,
// `SourceStatusReporter`) lives in a module of its own, which the MQTT link and the lifecycle
// build on too; an app that imports this module sees it as part of this one.
@_exported public import SourceFramework
