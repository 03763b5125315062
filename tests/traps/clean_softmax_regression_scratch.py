# d2l's softmax regression from scratch: hand-written softmax and cross-entropy, hand-written SGD with
# param.grad.zero_(), accuracy under no_grad. The seatbelt must stay silent.
import glasstorch as torch

torch.manual_seed(0)
num_inputs, num_outputs = 8, 3
W = torch.normal(0, 0.01, size=(num_inputs, num_outputs), requires_grad=True)
b = torch.zeros(num_outputs, requires_grad=True)
X, y = torch.randn(60, num_inputs), torch.randint(0, 3, (60,))


def softmax(X):
    X_exp = torch.exp(X - X.max(dim=1, keepdim=True).values)
    return X_exp / X_exp.sum(1, keepdim=True)


def net(X):
    return softmax(torch.matmul(X.reshape((-1, W.shape[0])), W) + b)


def cross_entropy(y_hat, y):
    # d2l indexes with range(len(y_hat)); glasstorch does not take a range object as an index yet
    return -torch.log(y_hat[list(range(len(y_hat))), y])


def sgd(params, lr, batch_size):
    with torch.no_grad():
        for param in params:
            param -= lr * param.grad / batch_size
            param.grad.zero_()


def accuracy(y_hat, y):
    return float((y_hat.argmax(dim=1).type(y.dtype) == y).sum())


for epoch in range(3):
    for i in range(0, 60, 20):
        l = cross_entropy(net(X[i:i + 20]), y[i:i + 20])
        l.sum().backward()
        sgd([W, b], 0.1, 20)
    with torch.no_grad():
        train_l = cross_entropy(net(X), y)
        acc = accuracy(net(X), y) / len(y)
    print(f"epoch {epoch + 1}, loss {float(train_l.mean()):f}, acc {acc:.2f}")
