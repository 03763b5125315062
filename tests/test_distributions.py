"""torch.distributions subset: log_prob/entropy/mean against torch, samples in the support with the
right moments, rsample differentiable."""
import numpy as np
import pytest

import glasstorch as gt
from glasstorch import distributions as D

torch = pytest.importorskip("torch")
TD = torch.distributions


def close(a, b, rtol=1e-6):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=rtol, atol=1e-7)


def both(x):
    return gt.tensor(x, dtype=gt.float64), torch.tensor(x, dtype=torch.float64)


def test_normal_log_prob_entropy_cdf_and_rsample_grad():
    (loc, tloc), (scale, tscale) = both([0.0, 1.5, -2.0]), both([1.0, 0.5, 2.0])
    (v, tv) = both([0.3, 1.0, -5.0])
    ours, theirs = D.Normal(loc, scale), TD.Normal(tloc, tscale)
    close(ours.log_prob(v), theirs.log_prob(tv))
    close(ours.entropy(), theirs.entropy())
    close(ours.cdf(v), theirs.cdf(tv))
    mu = gt.tensor(1.0, requires_grad=True)
    s = D.Normal(mu, 2.0).rsample((1000,))
    s.mean().backward()
    assert mu.grad.item() == pytest.approx(1.0)
    with pytest.raises(ValueError, match="scale"):
        D.Normal(0.0, -1.0)


def test_categorical_and_bernoulli():
    (p, tp) = both([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]])
    ours, theirs = D.Categorical(p), TD.Categorical(tp)
    v = gt.tensor([2, 0])
    close(ours.log_prob(v), theirs.log_prob(torch.tensor([2, 0])))
    close(ours.entropy(), theirs.entropy())
    gt.manual_seed(0)
    s = ours.sample((4000,))
    assert tuple(s.shape) == (4000, 2) and s.dtype == gt.int64
    freq = (s[:, 0] == 2).double().mean().item()
    assert abs(freq - 0.7) < 0.04
    (q, tq) = both([0.3, 0.9])
    close(D.Bernoulli(q).log_prob(gt.tensor([1.0, 0.0], dtype=gt.float64)),
          TD.Bernoulli(tq).log_prob(torch.tensor([1.0, 0.0], dtype=torch.float64)))
    with pytest.raises(ValueError, match="Either `probs` or `logits`"):
        D.Categorical()


def test_multinomial_as_d2l_uses_it():
    fair = gt.ones([6]) / 6
    gt.manual_seed(1)
    counts = D.Multinomial(1000, fair).sample()
    assert counts.sum().item() == 1000 and tuple(counts.shape) == (6,)
    assert (counts / 1000 - 1 / 6).abs().max().item() < 0.05
    assert tuple(D.Multinomial(10, fair).sample((500,)).shape) == (500, 6)
    (p, tp) = both([0.2, 0.3, 0.5])
    (v, tv) = both([2.0, 3.0, 5.0])
    close(D.Multinomial(10, p).log_prob(v), TD.Multinomial(10, tp).log_prob(tv))


def test_binomial_poisson_uniform():
    (p, tp), (v, tv) = both([0.2, 0.6]), both([3.0, 7.0])
    close(D.Binomial(10, p).log_prob(v), TD.Binomial(10, tp).log_prob(tv), rtol=1e-5)
    (r, tr) = both([2.0, 0.5])
    close(D.Poisson(r).log_prob(v), TD.Poisson(tr).log_prob(tv))
    close(D.Poisson(r).mean, TD.Poisson(tr).mean)
    (lo, tlo), (hi, thi) = both([0.0, 1.0]), both([2.0, 5.0])
    (u, tu) = both([1.0, 2.0])
    close(D.Uniform(lo, hi).log_prob(u), TD.Uniform(tlo, thi).log_prob(tu))
    gt.manual_seed(0)
    s = D.Poisson(gt.tensor([3.0])).sample((2000,))
    assert abs(s.mean().item() - 3.0) < 0.2
    b = D.Binomial(10, gt.tensor(0.3)).sample((2000,))
    assert 0 <= b.min().item() and b.max().item() <= 10 and abs(b.mean().item() - 3.0) < 0.2
