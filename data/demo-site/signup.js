/* SPDX-License-Identifier: GPL-3.0-or-later */
(() => {
  const form = document.getElementById ('signup');
  const error = document.getElementById ('form-error');
  const value = (id) => document.getElementById (id).value.trim ();
  const params = new URLSearchParams (location.search);
  if (params.get ('plan'))
    document.getElementById ('plan').value = params.get ('plan');

  const checks = {
    2: () => {
      if (!value ('full-name'))
        return 'Enter your full name.';
      if (!/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test (value ('signup-email')))
        return 'Enter a valid work email.';
      return null;
    },
    3: () => {
      if (!value ('workspace'))
        return 'Name your workspace.';
      if (!document.getElementById ('terms').checked)
        return 'Accept the terms of service to continue.';
      return null;
    },
  };

  const show = (step) => {
    for (let i = 1; i <= 3; i++) {
      document.getElementById ('step-' + i).hidden = i !== step;
      const label = document.getElementById ('step-' + i + '-label');
      label.classList.toggle ('done', i < step);
      if (i === step)
        label.setAttribute ('aria-current', 'step');
      else
        label.removeAttribute ('aria-current');
    }
    if (step === 3) {
      const plan = document.getElementById ('plan');
      const size = document.getElementById ('team-size');
      document.getElementById ('review').innerHTML = '';
      for (const [term, detail] of [['Name', value ('full-name')], ['Email', value ('signup-email')],
                                    ['Workspace', value ('workspace')],
                                    ['Team size', size.options[size.selectedIndex].text],
                                    ['Plan', plan.options[plan.selectedIndex].text]]) {
        const dt = document.createElement ('dt');
        const dd = document.createElement ('dd');
        dt.textContent = term;
        dd.textContent = detail;
        document.getElementById ('review').append (dt, dd);
      }
    }
    const first = document.querySelector ('#step-' + step + ' input, #step-' + step + ' button');
    if (first)
      first.focus ();
  };

  form.addEventListener ('click', (event) => {
    const button = event.target.closest ('[data-next]');
    if (!button)
      return;
    const next = Number (button.dataset.next);
    const problem = checks[next] && next > Number (form.dataset.step || 1) ? checks[next] () : null;
    error.hidden = !problem;
    error.textContent = problem || '';
    if (!problem) {
      form.dataset.step = String (next);
      show (next);
    }
  });

  form.addEventListener ('submit', (event) => {
    event.preventDefault ();
    form.hidden = true;
    document.querySelector ('.steps').hidden = true;
    document.getElementById ('done').hidden = false;
    document.getElementById ('done-text').textContent =
      'Workspace “' + value ('workspace') + '” is on a 14-day trial of the ' +
      document.getElementById ('plan').selectedOptions[0].text + ' plan.';
  });
}) ();
