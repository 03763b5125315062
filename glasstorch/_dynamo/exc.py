"""torch._dynamo.exc: the errors compile raises."""


class TorchDynamoException(RuntimeError):
    pass


class Unsupported(TorchDynamoException):
    """What the function does cannot be captured (raised at a graph break under fullgraph=True)."""


class InvalidBackend(TorchDynamoException):
    def __init__(self, message):
        super().__init__(message)


class BackendCompilerFailed(TorchDynamoException):
    pass


class RecompileError(TorchDynamoException):
    pass
