import NotifyBus
